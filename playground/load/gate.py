"""Keep torchao out of a float load: Transformers' torchao quantizer module runs its top without it.

`transformers/quantizers/quantizer_torchao.py` begins `if is_torchao_available(): from torchao... import ...`,
and `transformers.modeling_utils` imports it (through `quantizers.auto`) as the first model is built. `install()`
puts `TorchaoGate` first on `sys.meta_path`: when that module is imported, its top runs with
`transformers.utils.is_torchao_available` answering False, then the real function is back. Nothing else changes:
Transformers only needs torchao there to load or save checkpoints quantized with `TorchAoConfig`, which the
playground does not do (it quantizes after loading, load/quantize.py). Costs nothing until that import happens.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

MODULE = "transformers.quantizers.quantizer_torchao"


class TorchaoGate(importlib.abc.MetaPathFinder):
    """Finds MODULE as Python would, and runs its top with torchao reported absent."""

    def find_spec(self, name, path, target=None):
        if name != MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module) -> None:
            import transformers.utils as tf_utils  # deferred (cycle): imported by the very import being gated

            real = tf_utils.is_torchao_available
            tf_utils.is_torchao_available = lambda *_a, **_k: False
            try:
                run(module)
            finally:
                tf_utils.is_torchao_available = real

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Put the gate first on sys.meta_path, once (before Transformers builds its first model)."""
    if not any(isinstance(f, TorchaoGate) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchaoGate())
