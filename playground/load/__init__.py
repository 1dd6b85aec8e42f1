"""Getting a model in: what a name refers to, whether it fits, the timed load, the migration.

Importing this package installs `gate.TorchaoGate`: Transformers' torchao quantizer module imports torchao at
its top whenever torchao is installed, and Transformers imports that module as it builds its first model, so every
float32 load would import torchao (about half a second to three here) and print its "Failed to load ... .so"
lines. The gate runs that one module's top with Transformers told torchao is absent; the playground quantizes
with torchao's own `quantize_`, imported only when int8 or int4 is asked for (load/quantize.py).
"""

from playground.load.gate import install

install()
