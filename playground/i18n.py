"""The playground's own words, in English and Chinese: the page, and the break-it lab.

Everything here is the playground's explanation of what happened, written by
us. The errors themselves are never stored here: the lab shows what the
installed PyTorch, Transformers and Accelerate raise, live. `EN` and `ZH` have
identical keys (a test checks it); `t(key, lang)` picks one and fills `{name}`
fields.
"""

from __future__ import annotations

LANGS = ("en", "zh")

EN: dict[str, str] = {
    # --- labels used by the Markdown renderers -------------------------------------------
    "ui.error": "Error",
    "ui.where": "Where it surfaced in our pipeline",
    "ui.raised_in": "Raised inside",
    "ui.tensors": "Tensors involved",
    "ui.name": "Name",
    "ui.device": "Device",
    "ui.dtype": "Dtype",
    "ui.shape": "Shape",
    "ui.what": "What happened",
    "ui.fix": "The fix",
    "ui.before": "Before (the mistake)",
    "ui.after": "After (the fix)",
    "ui.fix_run": "The fixed pipeline, run for real",
    "ui.fix_ok": "The fix works",
    "ui.fix_failed": "The fix did not work here",
    "ui.no_error": "No exception: this mistake is silent. What it costs, measured here:",
    "ui.measured": "Measured",
    "ui.warnings": "Warnings the libraries printed",
    "ui.simulated": "Simulated",
    "ui.real": "Run for real on {device}.",
    "ui.cannot_run": "Cannot run here",
    "ui.output": "Output",
    "ui.seconds": "{seconds:.3f} s",
    "ui.tokens": "{n} new tokens in {seconds:.3f} s",
    "ui.quantity": "Quantity",
    "ui.value": "Value",
    "ui.not_recognised": "Not recognised: none of the lab's mistakes matches this text. "
                         "Paste the last lines of the traceback (the exception type and its message).",
    "ui.matches": "Matching mistakes, best first",
    "ui.matched_text": "Matched line",
    "ui.try_it": "Reproduce it in the lab: scenario `{id}`.",
    "ui.module": "Module",
    "ui.params": "Parameters",
    "ui.buffers": "Buffers",
    "ui.bytes": "Bytes",
    "ui.tensors_n": "Tensors",
    "ui.flag": "Flag",
    "ui.summary": "Summary by (device, dtype)",
    "ui.modules": "Every module with its own parameters or buffers",
    "ui.flagged": "Mixed placement: {n} module(s) differ from the rest",
    "ui.flagged_none": "Every tensor of this model sits on the same device with the same dtype.",
    "ui.counts": "Counting the model's tensors four ways",
    "ui.count_api": "Call",
    "ui.count_n": "Count",
    "ui.device_map": "hf_device_map (where Accelerate placed each module)",
    "ui.fake_note": "Fake tensors: shapes, dtypes and devices without data (no memory used).",
    "ui.rows_cut": "{shown} of {total} rows shown.",
    # --- names of measured quantities -------------------------------------------------------
    "m.prompt_tokens": "prompt tokens per forward pass",
    "m.timed_runs_per_dtype": "timed runs per dtype",
    "m.statistic": "statistic",
    "m.float32_ms": "float32: one forward pass (ms)",
    "m.float16_ms": "float16: one forward pass (ms)",
    "m.bfloat16_ms": "bfloat16: one forward pass (ms)",
    "m.float16_vs_float32": "float16 time ÷ float32 time",
    "m.bfloat16_vs_float32": "bfloat16 time ÷ float32 time",
    "m.cpu": "CPU",
    "m.cpu_native_fp16": "CPU has native float16",
    "m.cpu_native_bf16": "CPU has native bfloat16",
    "m.train_mode_logits_max_abs_diff": "train mode: largest logit difference between two identical runs",
    "m.train_mode_positions_with_different_top_token": "train mode: positions whose top token changed",
    "m.dropout_p": "dropout probability in the model",
    "m.no_inference_mode_saved_tensors": "without inference_mode: tensors kept for backward",
    "m.no_inference_mode_saved_bytes": "without inference_mode: memory kept for backward",
    "m.weights_bytes": "the weights, for scale",
    "m.fixed_logits_max_abs_diff": "fixed: largest logit difference between two runs",
    "m.fixed_saved_bytes": "fixed: memory kept for backward",
    "m.checkpoint_bytes": "checkpoint file size",
    "m.storage_locations_in_file": "storage locations recorded in the file",
    "m.storages": "storages in the file",
    # --- flags of the inspect view -------------------------------------------------------
    "flag.device": "on {device}, while most of the model is on {majority}",
    "flag.dtype": "in {dtype}, while most of the model is in {majority}",
    "flag.mixed": "its own tensors are on several devices: {devices}",
    "inspect.counts_note": (
        "state_dict() lists every name, so a tied weight appears twice (GPT-2's lm_head.weight and "
        "transformer.wte.weight are one tensor). parameters() and named_parameters() yield each tensor "
        "once, under its first name. buffers() are tensors that are saved and moved with the model but are "
        "not trained (some, like rotary frequencies, are not saved: they are non-persistent)."
    ),
    "inspect.tied": "Tied (one tensor, several names): {names}",
    # --- labels of the simulation --------------------------------------------------------
    "sim.fake_cuda": "Simulated on a fake cuda:0 device: this machine has no GPU.",
    "sim.fake_cuda_differs": (
        "PyTorch's fake tensors carry a device, a dtype and a shape but no data, and PyTorch's own device "
        "check raised the message above. On a real GPU the message also names the operator and argument in "
        "a parenthesis (for example index_select, or addmm with mat1). The fixed run below happens on the CPU."
    ),
    "sim.conv_dtype": (
        "Simulated: this machine has no GPU, and PyTorch's fake tensors skip the convolution's type check. "
        "That check compares the input's and the weight's whole tensor type, device and dtype together, so "
        "here the weight stays float32 and the input is bfloat16: the same check fires with its own message. "
        "On a GPU the parenthesis names the CPU and CUDA types (a CPU float tensor and a cuda float tensor) "
        "instead of two CPU dtypes. The fixed run below happens on the CPU."
    ),
    "sim.meta_generate": (
        "Simulated with the meta device: this machine has no GPU, and generate() cannot run on fake tensors "
        "(it reads token values to decide when to stop). Meta is a real second device type that holds shapes "
        "but no data, so Transformers' own device-type check fires and prints its warning above. The special "
        "token ids are unset on a shallow copy of the model so that generate() reaches that check before it "
        "needs a token's value; then it fails, because meta tensors have no values to read. On a GPU host "
        "this scenario runs for real (model on the CPU, input_ids on cuda:0)."
    ),
    "sim.big_model": "The loaded model is too large to copy for this scenario ({size}); it ran on the bundled model.",
    # --- mistakes: titles and explanations ---------------------------------------------------
    "inputs-on-cpu.title": "Inputs left on the CPU, model on the GPU",
    "inputs-on-cpu.explain": (
        "The model's weights were moved to the GPU, but the token ids came from the tokenizer on the CPU and "
        "were never moved. The very first operator, the embedding lookup, needs its weight and its indices on "
        "the same device, so PyTorch stops and names both devices. Move the inputs with the model: "
        "`inputs.to(model.device)`."
    ),
    "model-on-cpu.title": "Inputs moved to the GPU, model never moved",
    "model-on-cpu.explain": (
        "The inputs were sent to the GPU, but `model.to(device)` was never called, so every weight is still "
        "in CPU memory. The embedding lookup meets a CPU weight and GPU indices and refuses. Move the model "
        "once, after loading, and the inputs on every call."
    ),
    "block-left-behind.title": "Model moved only in part: one transformer block left behind",
    "block-left-behind.explain": (
        "All of the model went to the GPU except one transformer block (here transformer.h.0, as happens when "
        "layers are moved one by one and one is missed, or a custom placement forgets a module). The hidden "
        "states arrive on the GPU and the block's first operator finds its weight on the CPU. The Inspect view "
        "flags the row that differs. Move the whole model with one `model.to(device)`, or let Accelerate "
        "place it with `device_map`."
    ),
    "dtype-mismatch.title": "Dtype mismatch: bfloat16 weights fed float32 inputs_embeds",
    "dtype-mismatch.explain": (
        "The weights were cast to bfloat16, but the embeddings passed as `inputs_embeds` were computed in "
        "float32. Operators check their operands' dtypes: here it is the first LayerNorm that refuses (its "
        "CPU kernel accepts a lower-precision input with float32 weights, not the reverse); a Linear layer "
        "refuses with the matmul wording instead. Cast the inputs to the model's dtype, or build them with the "
        "model's own embedding layer."
    ),
    "meta-weights-run.title": "Meta weights used: a model built on the meta device, then run",
    "meta-weights-run.explain": (
        "`init_empty_weights()` (or `torch.device('meta')`) builds the model with meta tensors: shapes and "
        "dtypes, no data. The forward pass does not fail, because meta operators only compute output shapes, "
        "so the logits come out on the meta device. The error appears where a meta result meets a real tensor: "
        "appending the next token to the CPU input_ids. Load real weights (from_pretrained, or "
        "`load_state_dict(..., assign=True)`) before running."
    ),
    "meta-weights-moved.title": "Meta weights moved: .to(device) on a meta model",
    "meta-weights-moved.explain": (
        "`.to()` copies each tensor's data to the target device, and a meta tensor has no data to copy, so "
        "PyTorch refuses and points to `to_empty()`. `to_empty(device=...)` allocates uninitialised memory "
        "for every tensor on the target; the weights must then be loaded into it, and tied weights re-tied."
    ),
    "offloaded-moved.title": "An Accelerate-dispatched model with offloaded modules moved with .to()",
    "offloaded-moved.explain": (
        "`dispatch_model` with a device map that sends blocks to the disk replaces those weights with meta "
        "tensors and attaches hooks that load the real ones for each forward pass. A later `.to()` would move "
        "the empty meta tensors and break that arrangement, so Accelerate wraps `.to()` and refuses. Leave the "
        "placement to the device map (see hf_device_map below) and call the model as it is."
    ),
    "cuda-checkpoint.title": "A checkpoint saved on a GPU, loaded on a CPU-only machine without map_location",
    "cuda-checkpoint.explain": (
        "`torch.save` records, for every storage, the device it lived on (here cuda:0). `torch.load` restores "
        "each storage on that device unless told otherwise, and this machine has no CUDA. "
        "`map_location='cpu'` rewrites the location at load time; `weights_only=True` (the default since "
        "PyTorch 2.6) unpickles only tensors and plain containers, so a checkpoint cannot run code."
    ),
    "conv-devices.title": "A convolution whose input and weight live on different devices",
    "conv-devices.explain": (
        "Causal LMs never raise this one; a small `nn.Conv2d` does. The convolution checks, before any work, "
        "that its input and its weight have the same tensor type (device and dtype together), and names both "
        "types when they differ. Move the input to the layer's device and dtype: "
        "`x.to(conv.weight.device, conv.weight.dtype)`."
    ),
    "generate-device-type.title": "generate() called with input_ids on a different device type than the model",
    "generate-device-type.explain": (
        "Transformers compares the device type of `input_ids` with the model's before generating (types only: "
        "cuda:1 against cuda:0 passes) and warns when they differ. Transformers 5 then copies the forward's "
        "inputs to the model's device before every step, so on a GPU the warning and a slower loop are the "
        "cost; older versions failed with the device mismatch of the first mistake. Move the inputs to "
        "`model.device` once, before calling generate()."
    ),
    "fp16-on-cpu.title": "float16 on a CPU without native float16",
    "fp16-on-cpu.explain": (
        "Nothing fails. Most x86 CPUs have no float16 arithmetic: PyTorch converts each float16 operand to "
        "float32, computes, and converts back, so the model uses half the memory but runs several times "
        "slower than in float32. bfloat16 is fast on a CPU only with AVX512-BF16 or AMX. The numbers below "
        "were measured on this machine, on the same prompt."
    ),
    "eval-inference-forgotten.title": "Forgot model.eval() and torch.inference_mode()",
    "eval-inference-forgotten.explain": (
        "Nothing fails either. Without `model.eval()` the dropout layers stay active, so the same prompt gives "
        "different logits on every run. Without `torch.inference_mode()` (or `no_grad()`) autograd records "
        "the graph and keeps the activations each operator would need for a backward pass that never comes. "
        "Both costs are measured below."
    ),
    # --- diagnoses without a lab scenario ------------------------------------------------------
    "quantized-moved.title": "A bitsandbytes 4-bit or 8-bit model moved with .to()",
    "quantized-moved.explain": (
        "A model loaded with `load_in_4bit`/`load_in_8bit` (a BitsAndBytesConfig) is placed on the GPU while "
        "loading, and its quantized weights cannot be moved or cast afterwards, so Transformers refuses "
        "`.to()`. Choose the device at load time with `device_map` and leave it there; move only the inputs."
    ),
    "device-side-assert.title": "CUDA device-side assert: usually an index out of range",
    "device-side-assert.explain": (
        "A GPU kernel checked an index and found it out of range, most often a token id at or beyond the "
        "embedding's vocabulary size (a tokenizer that does not match the model, or added tokens without "
        "`resize_token_embeddings`), or a label outside the classes. CUDA reports it late, at a later call, "
        "and the CUDA context is unusable afterwards. Rerun on the CPU (or with CUDA_LAUNCH_BLOCKING=1) to "
        "see the real line, and check `input_ids.max() < model.get_input_embeddings().num_embeddings`."
    ),
    "no-cuda.title": "CUDA asked for on a machine or a PyTorch build without it",
    "no-cuda.explain": (
        "The code moves something to `cuda`, but this PyTorch is a CPU-only build or no NVIDIA driver and GPU "
        "are visible. Pick the device from what is available: "
        "`device = 'cuda' if torch.cuda.is_available() else 'cpu'`."
    ),
    "mps-float64.title": "float64 on Apple's MPS",
    "mps-float64.explain": (
        "The MPS backend has no float64. A tensor created in float64 (NumPy's default for floats) cannot go "
        "to `mps`: convert it to float32 first, e.g. `torch.from_numpy(a).float().to('mps')`."
    ),
    # --- the page (labels, reports, stats) ----------------------------------------------
    'page.title': 'The device playground',
    'page.intro': 'Pick a model, a device and a dtype, press **Load**, and see what PyTorch does, measured on this machine: how long `from_pretrained` takes to read the weights from disk, and *separately* how long `model.to(device)` takes to move them; what that costs in RAM and VRAM; then watch tokens stream in with live tokens/s. Flip **Break it** to see the real error each classic mistake raises.',
    'page.lang': 'Language / 语言',
    'page.tab.play': 'Playground',
    'page.tab.inspect': 'Inspect',
    'page.tab.diagnose': 'Diagnose an error',
    'page.model': 'Model',
    'page.model.info': 'Pick one, or type a Hub id (owner/name) or a local folder.',
    'page.device': 'Device',
    'page.dtype': 'dtype',
    'page.load': 'Load',
    'page.devices': 'Devices on this machine',
    'page.report.empty': 'Press **Load** to see each phase timed and measured.',
    'page.report.json': 'Raw load report (JSON)',
    'page.generate.title': '## Generate',
    'page.prompt': 'Prompt',
    'page.max_new': 'max_new_tokens',
    'page.temperature': 'temperature (0 = greedy)',
    'page.top_p': 'top_p',
    'page.seed': 'seed',
    'page.generate': 'Generate',
    'page.stop': 'Stop',
    'page.output': 'Output',
    'page.breakit': 'Break it',
    'page.breakit.info': 'Run the loaded model through the pipeline with one classic mistake, and see what PyTorch raises.',
    'page.mistake': 'Mistake',
    'page.snippet': 'The code to copy: this run, in plain Transformers',
    'page.inspect.intro': 'Where does every tensor live? One row per module, with its device(s), dtype(s), parameters and bytes.',
    'page.inspect.loaded': 'Inspect the loaded model',
    'page.inspect.half': 'Inspect a half-moved model (mistake 3)',
    'page.diagnose.intro': 'Paste a traceback or an error line: the playground names the mistake, explains it and shows the fix.',
    'page.diagnose.box': 'Traceback or error message',
    'page.diagnose.run': 'Diagnose',
    'status.none': '**Loaded:** nothing yet. Press **Load** (the bundled model works offline).',
    'status.loaded': '**Loaded:** `{model}` on `{device}` in `{dtype}`',
    'report.phase': 'phase',
    'report.what': 'what ran',
    'report.time': 'time',
    'report.rss': 'RSS before → after',
    'report.drss': 'Δ RSS',
    'report.vram': 'VRAM after',
    'report.import': 'find the model class (imports its code once per process)',
    'report.estimate': 'check it fits: build on the meta device, no weights',
    'report.check': 'memory check',
    'report.mmap': 'float32 on the CPU from a float32 checkpoint: Transformers maps the file into memory instead of copying it, so RSS grows as the pages are first read (during the first generation), not during the load.',
    'report.load': '`from_pretrained(...)`: disk → RAM',
    'report.load_auto': "`from_pretrained(...)` with `device_map='auto'`",
    'report.placed': '(placed while loading)',
    'report.params': 'Parameters',
    'report.buffers': 'buffers',
    'report.weights': 'weights',
    'report.weights_how': 'Σ numel × element size',
    'report.disk': 'on disk',
    'report.ram_growth': 'Measured RAM growth over the whole load: {delta} against {weights} of weights in theory. System RAM available after: {avail}.',
    'report.dtype': 'dtype',
    'report.migration': 'migration',
    'report.hint': 'hint',
    'report.placement': 'placement',
    'stats.running': 'generating…',
    'stats.done': 'done ({reason})',
    'stats.mode': 'mode',
    'stats.greedy': 'greedy',
    'stats.sampling': 'sampling',
    'stats.ttft': 'time to first token',
    'stats.prompt': 'prompt tokens',
    'stats.new': 'new tokens',
    'stats.rate': 'decode rate',
    'stats.total': 'total',
    'stats.rate_cell': '{rate} ({n} tokens in {t})',
    'lab.running': 'Running the mistake, then its fix…',
    'timeline.title': 'Memory timeline (sampled at 15 Hz while loading and generating)',
    'timeline.rss_start': 'RSS at start',
    'timeline.rss_peak': 'peak RSS',
    'timeline.avail_min': 'lowest available',
    'page.engine': 'Generation engine',
    'page.engine.info': "generate(), or the tutorials' manual loop: prefill once, then one token at a time with the KV cache (or without it)",
    'page.estimate': 'Estimate before loading',
    'estimate.fits': 'Fits',
    'estimate.refused': 'Would be refused',
    'estimate.what': 'what',
    'estimate.required': 'needed, with the margin',
    'estimate.available': 'available',
    'estimate.largest': 'largest layer',
    'estimate.kv': 'KV cache per token',
    'estimate.by_dtype': 'weights by dtype',
    'page.tab.compare': 'Compare',
    'stats.per_token': 'per-token decode times',
    'page.compare.intro': 'Run every (device, dtype) pair through load, migrate, one prompt and a fixed number of greedy tokens. The shared model is unloaded while the matrix runs.',
    'page.compare.pairs': 'Pairs to run',
    'page.compare.tokens': 'greedy tokens per run',
    'page.compare.run': 'Run the matrix',
    'page.compare.stop': 'Stop after this run',
    'page.compare.files': 'Download the table',
    'hint.fp16_cpu_slow': 'float16 on this CPU has no native support: PyTorch converts to float32 internally, so it halves memory but runs several times slower than float32.',
    'hint.bf16_cpu_emulated': 'bfloat16 halves memory; this CPU lacks AVX512-BF16/AMX, so matmuls are emulated and may be slower than float32.',
    'hint.bf16_cpu_native': 'bfloat16 halves memory and this CPU computes it natively (AVX512-BF16/AMX).',
    'hint.bf16_gpu_old': '{name} (compute {capability}) has no bfloat16 tensor cores: it runs, emulated and slowly. Prefer float16 on this GPU.',
    'hint.fp32_gpu': "float32 on a GPU uses twice the memory of float16/bfloat16 and skips the tensor cores' fastest path.",
    'hint.bf16_mps': 'bfloat16 on MPS needs macOS 14 or newer.',
    'hint.auto': 'auto keeps the dtype stored in the checkpoint (torch_dtype/dtype in config.json).',
    'note.migrate.noop': 'no-op: the weights were already on {device}, so Tensor.to() returned each tensor itself without copying (same data_ptr before and after); the time is just the walk over every parameter and buffer.',
    'note.migrate.copied': 'copied every parameter and buffer from {src} to {dst} and repointed the module at them.',
    'note.migrate.auto_hooks': "device_map='auto' placed each layer while loading, so there is no separate .to(). Accelerate spread the layers over several devices and hooked them (see hf_device_map); calling .to() on such a model is refused.",
    'note.migrate.auto_single': "device_map='auto' placed each layer while loading, so there is no separate .to(). Everything fit on one device, so Transformers loaded it there directly: no hooks, and no hf_device_map (it is set only when layers span devices or disk).",
    'note.dtype.auto': "auto: kept the checkpoint's own dtype, {dtype}",
    'note.dtype.cast': 'asked for {dtype}: from_pretrained cast the weights while loading',
    # errors (inputs.UserError.of): what was wrong and what to do
    'err.unicode': "The {what} contains invalid Unicode (an unpaired surrogate, U+{code}, at character {at:,}). Paste plain text.",
    'err.prompt_type': 'The prompt must be text.',
    'err.prompt_long': 'The prompt is {n:,} characters; the limit is {limit:,} (PLAYGROUND_MAX_PROMPT_CHARS). Shorten it (the models here have short contexts anyway).',
    'err.prompt_empty': "The prompt is empty. Type a few words for the model to continue, e.g. 'ROMEO:'.",
    'err.prompt_nul': 'The prompt contains NUL bytes (binary data). Paste plain text.',
    'err.diag_type': 'Paste the error as text: a traceback or its last line.',
    'err.diag_long': "The pasted text is {n:,} characters; the limit is {limit:,} (PLAYGROUND_MAX_DIAGNOSE_CHARS). Paste the traceback's last lines: the error is at the end.",
    'err.diag_empty': 'Nothing to diagnose: paste a traceback or an error line, e.g. the last line of the error.',
    'err.temperature': 'temperature must be between 0 (greedy) and 5; got {got}.',
    'err.top_p': 'top_p must be in (0, 1]: the share of probability mass to sample from; got {got}.',
    'err.whole': '{name} must be a whole number from {lo} to {hi}; got {got}.',
    'err.number': '{name} must be a number; got {got}.',
    'err.finite': '{name} must be a finite number; got {got}.',
    'err.model_none': "No model given. Pick one from the list; '{bundled}' works offline.",
    'err.model_long': 'That model name is too long. Use a Hub id (owner/name) or a local folder path.',
    'err.model_url': "URLs are not accepted ({host}). Give a Hugging Face Hub id such as 'gpt2', or a local folder; '{bundled}' works offline.",
    'err.model_name': "{model} is neither a Hub id (owner/name, letters, digits, '-', '_', '.') nor a local folder. Try '{bundled}', which works offline.",
    'err.path_bad': '{model} is not a usable path.',
    'err.path_outside': '{model} is outside the folders the playground may read. Put the model under one of {roots}, or add its parent folder to the PLAYGROUND_MODEL_DIRS environment variable.',
    'err.path_missing': "The folder {model} does not exist. Check the path, or pick '{bundled}'.",
    'err.path_file': '{model} is a file; give the folder that holds config.json and the weights.',
    'err.no_config': "'{name}' holds no model: config.json is missing.",
    'err.pickle_only': "'{name}' has only pickle weights (.bin/.pt). The playground loads safetensors only, because unpickling can run arbitrary code. Convert it with save_pretrained(safe_serialization=True).",
    'err.no_weights': "'{name}' has no .safetensors weights.",
    'err.st_unreadable': "'{name}' is not a readable safetensors file (a truncated or damaged download?). Download or save it again.",
    'err.st_truncated': "'{name}' is truncated: its header describes {want}, the file holds {have}. Download or save it again.",
    'err.hub_offline': "'{ref}' is not in the local Hugging Face cache and the Hub is unreachable ({why}). Offline, pick '{bundled}', the bundled model.",
    'err.not_causal': "'{name}' is not a causal language model Transformers knows (model_type '{model_type}').",
    'err.hub_missing': "'{ref}' was not found on the Hugging Face Hub. Check the spelling (owner/name).",
    'err.remote_code_hub': "'{ref}' needs custom code from the Hub (trust_remote_code), which the playground never runs.",
    'err.remote_code': "'{name}' needs custom code (trust_remote_code), which the playground never runs.",
    'err.device_none': 'No device given. Pick one of: {usable}.',
    'err.device_name': '{device} is not a device name PyTorch knows. Use cpu, cuda:N, mps or auto. Available here: {usable}.',
    'err.device_absent': 'Device {device} is not available here: {reason}. Available: {usable}.',
    'err.dtype': "{dtype} is not a dtype the playground offers. Use one of: {dtypes} (auto keeps the checkpoint's own dtype).",
    'err.not_loaded': 'No model is loaded yet. Press Load first (the bundled model works offline).',
    'err.unloaded': 'The model was unloaded. Press Load first.',
    'err.no_tokens': 'The prompt produced no tokens. Type some text.',
    'err.context': "The prompt is {n} tokens and max_new_tokens is {new}: {total} positions, but this model's context is {ctx}. Shorten the prompt or lower max_new_tokens to {room}.",
    # the memory check's refusal, put together by estimate.refusal
    'est.where.system': 'available system RAM (psutil)',
    'est.where.budget': '{env}={value} (caps the {system} the system has available)',
    'est.where.frees': '{where}, plus {frees} the loaded model frees first',
    'est.note.build': 'first use builds the float32 checkpoint in RAM ({build} with the margin)',
    'est.note.mps': 'MPS shares RAM with the CPU: load-then-move holds both copies for a moment',
    'est.reason.auto': 'needs {need} (weights + {margin} margin); the GPUs and RAM together have {pool} free',
    'est.reason.cuda': 'needs {need} of RAM while loading ({avail} available, {where}) and {vram} on {device} ({free} free)',
    'est.reason.ram': 'needs {need} (weights {weights} + {margin} margin); {avail} available ({where})',
    'est.refuse': "Not loading {model} in {dtype} on {device}: it {reason}. The margin covers activations and the KV cache (Accelerate's documented ~20%).",
    'est.refuse.note': ' ({note}.)',
    'est.refuse.try': ' Try: {tips}.',
    'est.sep': '; ',
    'est.tip.dtype': '{dtype} would need {need}',
    'est.tip.auto': "device 'auto' spreads the layers over the GPUs and the CPU",
    'est.tip.smaller': 'pick a smaller model (a smaller dtype would not fit either)',
}

ZH: dict[str, str] = {
    "ui.error": "错误",
    "ui.where": "在我们的流程中出错的位置",
    "ui.raised_in": "抛出位置",
    "ui.tensors": "涉及的张量",
    "ui.name": "名称",
    "ui.device": "设备",
    "ui.dtype": "数据类型",
    "ui.shape": "形状",
    "ui.what": "发生了什么",
    "ui.fix": "修复方法",
    "ui.before": "修复前（错误写法）",
    "ui.after": "修复后",
    "ui.fix_run": "修复后的流程，真实运行",
    "ui.fix_ok": "修复有效",
    "ui.fix_failed": "修复在这里没有成功",
    "ui.no_error": "没有异常：这个错误是静默的。它的代价，在本机实测：",
    "ui.measured": "实测",
    "ui.warnings": "库打印的警告",
    "ui.simulated": "模拟",
    "ui.real": "在 {device} 上真实运行。",
    "ui.cannot_run": "无法在这里运行",
    "ui.output": "输出",
    "ui.seconds": "{seconds:.3f} 秒",
    "ui.tokens": "{n} 个新 token，用时 {seconds:.3f} 秒",
    "ui.quantity": "指标",
    "ui.value": "数值",
    "ui.not_recognised": "无法识别：这段文字与实验室中的任何错误都不匹配。"
                         "请粘贴 traceback 的最后几行（异常类型和它的消息）。",
    "ui.matches": "匹配的错误（按相关度排序）",
    "ui.matched_text": "匹配到的行",
    "ui.try_it": "在实验室中复现：场景 `{id}`。",
    "ui.module": "模块",
    "ui.params": "参数量",
    "ui.buffers": "缓冲区",
    "ui.bytes": "字节",
    "ui.tensors_n": "张量数",
    "ui.flag": "标记",
    "ui.summary": "按（设备，数据类型）汇总",
    "ui.modules": "每个直接拥有参数或缓冲区的模块",
    "ui.flagged": "放置不一致：{n} 个模块与其余部分不同",
    "ui.flagged_none": "这个模型的所有张量都在同一设备上，数据类型也相同。",
    "ui.counts": "用四种方式数模型的张量",
    "ui.count_api": "调用",
    "ui.count_n": "数量",
    "ui.device_map": "hf_device_map（Accelerate 把每个模块放在哪里）",
    "ui.fake_note": "伪张量（fake tensor）：只有形状、数据类型和设备，没有数据（不占内存）。",
    "ui.rows_cut": "显示 {shown} / {total} 行。",
    "m.prompt_tokens": "每次前向传播的提示词 token 数",
    "m.timed_runs_per_dtype": "每种数据类型的计时次数",
    "m.statistic": "统计方式",
    "m.float32_ms": "float32：一次前向传播（毫秒）",
    "m.float16_ms": "float16：一次前向传播（毫秒）",
    "m.bfloat16_ms": "bfloat16：一次前向传播（毫秒）",
    "m.float16_vs_float32": "float16 用时 ÷ float32 用时",
    "m.bfloat16_vs_float32": "bfloat16 用时 ÷ float32 用时",
    "m.cpu": "CPU",
    "m.cpu_native_fp16": "CPU 原生支持 float16",
    "m.cpu_native_bf16": "CPU 原生支持 bfloat16",
    "m.train_mode_logits_max_abs_diff": "训练模式：两次相同运行之间 logits 的最大差值",
    "m.train_mode_positions_with_different_top_token": "训练模式：最高概率 token 改变的位置数",
    "m.dropout_p": "模型中的 dropout 概率",
    "m.no_inference_mode_saved_tensors": "没有 inference_mode：为反向传播保留的张量数",
    "m.no_inference_mode_saved_bytes": "没有 inference_mode：为反向传播保留的内存",
    "m.weights_bytes": "权重大小（作参照）",
    "m.fixed_logits_max_abs_diff": "修复后：两次运行之间 logits 的最大差值",
    "m.fixed_saved_bytes": "修复后：为反向传播保留的内存",
    "m.checkpoint_bytes": "检查点文件大小",
    "m.storage_locations_in_file": "文件中记录的存储位置",
    "m.storages": "文件中的存储数",
    "flag.device": "在 {device} 上，而模型的大部分在 {majority} 上",
    "flag.dtype": "是 {dtype}，而模型的大部分是 {majority}",
    "flag.mixed": "它自己的张量分布在多个设备上：{devices}",
    "inspect.counts_note": (
        "state_dict() 列出每个名字，所以绑定（tied）的权重会出现两次（GPT-2 的 lm_head.weight 和 "
        "transformer.wte.weight 是同一个张量）。parameters() 和 named_parameters() 每个张量只给一次，"
        "用它的第一个名字。buffers() 是随模型保存和移动、但不参与训练的张量（有些，比如旋转位置编码的频率，"
        "不会被保存：它们是非持久的）。"
    ),
    "inspect.tied": "绑定（一个张量，多个名字）：{names}",
    "sim.fake_cuda": "在伪造的 cuda:0 设备上模拟：这台机器没有 GPU。",
    "sim.fake_cuda_differs": (
        "PyTorch 的伪张量（fake tensor）带有设备、数据类型和形状，但没有数据；上面的消息是 PyTorch 自己的"
        "设备检查抛出的。在真实 GPU 上，消息末尾的括号里还会写出算子和参数名（例如 index_select，或 addmm "
        "的 mat1）。下面修复后的流程在 CPU 上运行。"
    ),
    "sim.conv_dtype": (
        "模拟：这台机器没有 GPU，而 PyTorch 的伪张量会跳过卷积的类型检查。这个检查把输入和权重的完整张量类型"
        "（设备和数据类型一起）做比较，所以这里权重保持 float32、输入是 bfloat16：同一个检查用它自己的消息报错。"
        "在 GPU 上，括号里写的是 CPU 类型和 CUDA 类型（CPU 的 float 张量与 cuda 的 float 张量），而不是两种 "
        "CPU 数据类型。下面修复后的流程在 CPU 上运行。"
    ),
    "sim.meta_generate": (
        "用 meta 设备模拟：这台机器没有 GPU，而 generate() 不能在伪张量上运行（它要读取 token 的值来决定何时停止）。"
        "meta 是一个真实存在的第二种设备类型，只有形状没有数据，所以 Transformers 自己的设备类型检查会触发，"
        "并打印上面的警告。我们在模型的浅拷贝上取消了特殊 token 的 id，让 generate() 在需要读取 token 值之前"
        "先到达这个检查；随后它失败，因为 meta 张量没有值可读。在有 GPU 的机器上，这个场景会真实运行"
        "（模型在 CPU，input_ids 在 cuda:0）。"
    ),
    "sim.big_model": "已加载的模型太大，这个场景无法复制它（{size}）；改用内置模型运行。",
    "inputs-on-cpu.title": "输入留在 CPU 上，模型在 GPU 上",
    "inputs-on-cpu.explain": (
        "模型的权重已经移到 GPU，但 token id 是分词器在 CPU 上生成的，从没移动过。第一个算子——词嵌入查表——"
        "要求权重和索引在同一设备上，于是 PyTorch 停下来，并写出两个设备的名字。让输入跟着模型走："
        "`inputs.to(model.device)`。"
    ),
    "model-on-cpu.title": "输入移到了 GPU，模型却从没移动",
    "model-on-cpu.explain": (
        "输入被送到了 GPU，但从没调用 `model.to(device)`，所以每个权重都还在 CPU 内存里。词嵌入查表遇到 CPU "
        "上的权重和 GPU 上的索引，拒绝执行。加载后把模型移动一次，每次调用时移动输入。"
    ),
    "block-left-behind.title": "模型只移动了一部分：落下了一个 Transformer 块",
    "block-left-behind.explain": (
        "除了一个 Transformer 块（这里是 transformer.h.0），整个模型都去了 GPU——逐层移动时漏掉一层，"
        "或者自定义放置忘了某个模块，就会这样。隐藏状态在 GPU 上到达，这个块的第一个算子却发现自己的权重在 "
        "CPU 上。“检查”视图会标出不一致的那一行。用一次 `model.to(device)` 移动整个模型，或者让 "
        "Accelerate 用 `device_map` 来放置。"
    ),
    "dtype-mismatch.title": "数据类型不匹配：bfloat16 权重遇到 float32 的 inputs_embeds",
    "dtype-mismatch.explain": (
        "权重被转换成了 bfloat16，但作为 `inputs_embeds` 传入的嵌入是用 float32 计算的。算子会检查操作数的"
        "数据类型：这里是第一个 LayerNorm 拒绝（它的 CPU 内核接受低精度输入配 float32 权重，反过来不行）；"
        "如果先遇到的是线性层，报错会换成矩阵乘法的说法。把输入转换成模型的数据类型，或者用模型自己的词嵌入层来生成它们。"
    ),
    "meta-weights-run.title": "使用了 meta 权重：在 meta 设备上构建模型后直接运行",
    "meta-weights-run.explain": (
        "`init_empty_weights()`（或 `torch.device('meta')`）用 meta 张量构建模型：只有形状和数据类型，没有数据。"
        "前向传播并不报错，因为 meta 算子只计算输出形状，所以 logits 也在 meta 设备上。错误出现在 meta 结果"
        "遇到真实张量的地方：把下一个 token 拼接到 CPU 上的 input_ids 时。运行之前先加载真实权重"
        "（from_pretrained，或 `load_state_dict(..., assign=True)`）。"
    ),
    "meta-weights-moved.title": "移动 meta 权重：对 meta 模型调用 .to(device)",
    "meta-weights-moved.explain": (
        "`.to()` 会把每个张量的数据复制到目标设备，而 meta 张量没有数据可复制，所以 PyTorch 拒绝，并建议使用 "
        "`to_empty()`。`to_empty(device=...)` 在目标设备上为每个张量分配未初始化的内存；之后必须把权重加载进去，"
        "并重新绑定 tied 权重。"
    ),
    "offloaded-moved.title": "用 .to() 移动一个由 Accelerate 分派、且有模块被卸载的模型",
    "offloaded-moved.explain": (
        "用 `dispatch_model` 和把某些块放到磁盘（disk）的 device map 分派模型后，这些权重被换成 meta 张量，"
        "并挂上钩子（hook），在每次前向传播时加载真实权重。之后再调用 `.to()` 会移动空的 meta 张量、破坏这种安排，"
        "所以 Accelerate 包装了 `.to()` 并拒绝执行。把放置交给 device map（见下面的 hf_device_map），直接调用模型。"
    ),
    "cuda-checkpoint.title": "在 GPU 上保存的检查点，在只有 CPU 的机器上不带 map_location 加载",
    "cuda-checkpoint.explain": (
        "`torch.save` 会为每个存储记录它所在的设备（这里是 cuda:0）。除非另行指定，`torch.load` 会把每个存储"
        "恢复到那个设备上，而这台机器没有 CUDA。`map_location='cpu'` 在加载时改写位置；`weights_only=True`"
        "（PyTorch 2.6 起的默认值）只反序列化张量和普通容器，这样检查点就不能执行代码。"
    ),
    "conv-devices.title": "卷积的输入和权重在不同设备上",
    "conv-devices.explain": (
        "因果语言模型从不会抛出这个错误；一个小的 `nn.Conv2d` 会。卷积在计算之前检查输入和权重的张量类型"
        "（设备和数据类型一起）是否相同，不同时写出两种类型。把输入移到这一层的设备和数据类型上："
        "`x.to(conv.weight.device, conv.weight.dtype)`。"
    ),
    "generate-device-type.title": "调用 generate() 时 input_ids 与模型的设备类型不同",
    "generate-device-type.explain": (
        "Transformers 在生成前比较 `input_ids` 和模型的设备类型（只比较类型：cuda:1 对 cuda:0 不会触发），"
        "不同就发出警告。Transformers 5 随后会在每一步前把前向传播的输入复制到模型所在设备，所以在 GPU 上，"
        "代价是这条警告和更慢的循环；旧版本则会以第一个错误那样的设备不匹配失败。调用 generate() 之前，"
        "把输入一次性移到 `model.device`。"
    ),
    "fp16-on-cpu.title": "在没有原生 float16 的 CPU 上使用 float16",
    "fp16-on-cpu.explain": (
        "不会报错。大多数 x86 CPU 没有 float16 运算：PyTorch 把每个 float16 操作数转成 float32，计算后再转回来，"
        "所以模型只占一半内存，却比 float32 慢好几倍。bfloat16 只有在支持 AVX512-BF16 或 AMX 的 CPU 上才快。"
        "下面的数字是在这台机器上、用同一个提示词实测的。"
    ),
    "eval-inference-forgotten.title": "忘了 model.eval() 和 torch.inference_mode()",
    "eval-inference-forgotten.explain": (
        "同样不会报错。没有 `model.eval()`，dropout 层保持开启，同一个提示词每次运行得到的 logits 都不同。"
        "没有 `torch.inference_mode()`（或 `no_grad()`），autograd 会记录计算图，并保留每个算子在反向传播时"
        "需要的激活值——而反向传播永远不会发生。两种代价都在下面实测。"
    ),
    "quantized-moved.title": "用 .to() 移动 bitsandbytes 的 4 位或 8 位模型",
    "quantized-moved.explain": (
        "用 `load_in_4bit`/`load_in_8bit`（BitsAndBytesConfig）加载的模型在加载时就被放到 GPU 上，量化后的权重"
        "之后不能再移动或转换类型，所以 Transformers 拒绝 `.to()`。在加载时用 `device_map` 选定设备，不再移动；"
        "只移动输入。"
    ),
    "device-side-assert.title": "CUDA device-side assert：通常是索引越界",
    "device-side-assert.explain": (
        "某个 GPU 内核检查索引时发现越界，最常见的是 token id 大于等于词嵌入的词表大小（分词器与模型不匹配，"
        "或添加了 token 却没有 `resize_token_embeddings`），或者标签超出类别数。CUDA 报告得晚，出现在之后的某次调用，"
        "而且之后 CUDA 上下文就不能再用了。在 CPU 上重跑（或设置 CUDA_LAUNCH_BLOCKING=1）看到真正出错的行，"
        "并检查 `input_ids.max() < model.get_input_embeddings().num_embeddings`。"
    ),
    "no-cuda.title": "在没有 CUDA 的机器或 PyTorch 版本上请求 CUDA",
    "no-cuda.explain": (
        "代码把东西移到了 `cuda`，但这个 PyTorch 是只支持 CPU 的版本，或者看不到 NVIDIA 驱动和 GPU。根据可用的设备"
        "选择：`device = 'cuda' if torch.cuda.is_available() else 'cpu'`。"
    ),
    "mps-float64.title": "在 Apple 的 MPS 上使用 float64",
    "mps-float64.explain": (
        "MPS 后端没有 float64。以 float64 创建的张量（NumPy 浮点数的默认类型）不能移到 `mps`：先转换成 float32，"
        "例如 `torch.from_numpy(a).float().to('mps')`。"
    ),
    # --- the page (labels, reports, stats) ----------------------------------------------
    'page.title': '设备游乐场',
    'page.intro': '选择模型、设备和数据类型，点击**加载**，看看 PyTorch 实际做了什么，全部在这台机器上实测：`from_pretrained` 从磁盘读入权重用了多久，以及*单独*计时的 `model.to(device)` 搬运权重用了多久；它们占用多少内存和显存；然后看文本逐个 token 流式生成，实时显示 tokens/s。打开**搞坏它**，看看每个经典错误真正抛出的报错。',
    'page.lang': 'Language / 语言',
    'page.tab.play': '游乐场',
    'page.tab.inspect': '检查张量位置',
    'page.tab.diagnose': '诊断报错',
    'page.model': '模型',
    'page.model.info': '从列表中选择，或输入 Hub id（owner/name）或本地文件夹。',
    'page.device': '设备',
    'page.dtype': '数据类型',
    'page.load': '加载',
    'page.devices': '本机的设备',
    'page.report.empty': '点击**加载**，查看每个阶段的计时和测量结果。',
    'page.report.json': '原始加载报告（JSON）',
    'page.generate.title': '## 生成',
    'page.prompt': '提示词',
    'page.max_new': 'max_new_tokens（最多生成的 token 数）',
    'page.temperature': 'temperature（0 = 贪心解码）',
    'page.top_p': 'top_p',
    'page.seed': '随机种子',
    'page.generate': '生成',
    'page.stop': '停止',
    'page.output': '输出',
    'page.breakit': '搞坏它',
    'page.breakit.info': '让已加载的模型走一遍只犯了一个经典错误的流程，看看 PyTorch 抛出什么。',
    'page.mistake': '错误类型',
    'page.snippet': '可复制的代码：用纯 Transformers 复现这次运行',
    'page.inspect.intro': '每个张量都在哪里？每个模块一行，列出设备、数据类型、参数量和字节数。',
    'page.inspect.loaded': '检查已加载的模型',
    'page.inspect.half': '检查只搬了一半的模型（错误 3）',
    'page.diagnose.intro': '粘贴一段 traceback 或一行报错：游乐场会指出是哪种错误，解释原因并给出修复方法。',
    'page.diagnose.box': 'Traceback 或报错信息',
    'page.diagnose.run': '诊断',
    'status.none': '**已加载：**还没有。点击**加载**（内置模型无需联网）。',
    'status.loaded': '**已加载：**`{model}`，设备 `{device}`，数据类型 `{dtype}`',
    'report.phase': '阶段',
    'report.what': '执行了什么',
    'report.time': '耗时',
    'report.rss': 'RSS 之前 → 之后',
    'report.drss': 'RSS 变化',
    'report.vram': '之后的显存',
    'report.import': '找到模型类（每个进程只导入一次它的代码）',
    'report.estimate': '检查能否放下：在 meta 设备上构建，不含权重',
    'report.check': '内存检查',
    'report.mmap': '用 float32 检查点在 CPU 上加载 float32：Transformers 把文件映射到内存而不是复制，所以 RSS 在页面第一次被读取时（第一次生成时）才增长，而不是在加载时。',
    'report.load': '`from_pretrained(...)`：磁盘 → 内存',
    'report.load_auto': "`from_pretrained(...)`，使用 `device_map='auto'`",
    'report.placed': '（加载时已放置）',
    'report.params': '参数量',
    'report.buffers': '缓冲区',
    'report.weights': '权重',
    'report.weights_how': 'Σ 元素个数 × 每个元素的字节数',
    'report.disk': '磁盘上',
    'report.ram_growth': '整个加载过程实测内存增长：{delta}，理论权重大小：{weights}。加载后系统可用内存：{avail}。',
    'report.dtype': '数据类型',
    'report.migration': '迁移',
    'report.hint': '提示',
    'report.placement': '放置',
    'stats.running': '生成中…',
    'stats.done': '完成（{reason}）',
    'stats.mode': '模式',
    'stats.greedy': '贪心解码',
    'stats.sampling': '采样',
    'stats.ttft': '首个 token 耗时',
    'stats.prompt': '提示词 token 数',
    'stats.new': '新生成 token 数',
    'stats.rate': '解码速度',
    'stats.total': '总耗时',
    'stats.rate_cell': '{rate}（{t} 内生成 {n} 个 token）',
    'lab.running': '正在运行这个错误，然后运行修复…',
    'timeline.title': '内存时间线（加载和生成期间以 15 Hz 采样）',
    'timeline.rss_start': '开始时 RSS',
    'timeline.rss_peak': 'RSS 峰值',
    'timeline.avail_min': '最低可用内存',
    'page.engine': '生成引擎',
    'page.engine.info': 'generate()，或教程里的手写循环：先一次预填充（prefill），再带着 KV 缓存逐个 token 解码（或不带缓存）',
    'page.estimate': '加载前估算',
    'estimate.fits': '放得下',
    'estimate.refused': '会被拒绝',
    'estimate.what': '项目',
    'estimate.required': '所需（含余量）',
    'estimate.available': '可用',
    'estimate.largest': '最大的层',
    'estimate.kv': '每个 token 的 KV 缓存',
    'estimate.by_dtype': '各数据类型的权重大小',
    'page.tab.compare': '对比',
    'stats.per_token': '逐 token 解码耗时',
    'page.compare.intro': '让每个（设备，数据类型）组合都走一遍：加载、迁移、同一个提示词、固定数量的贪心 token。运行期间会卸载共享的模型。',
    'page.compare.pairs': '要运行的组合',
    'page.compare.tokens': '每次运行的贪心 token 数',
    'page.compare.run': '运行对比',
    'page.compare.stop': '这次运行后停止',
    'page.compare.files': '下载表格',
    'hint.fp16_cpu_slow': '这颗 CPU 没有原生 float16 支持：PyTorch 会在内部转换成 float32 计算，所以内存减半，但速度比 float32 慢好几倍。',
    'hint.bf16_cpu_emulated': 'bfloat16 让内存减半；这颗 CPU 没有 AVX512-BF16/AMX，矩阵乘法是模拟的，可能比 float32 还慢。',
    'hint.bf16_cpu_native': 'bfloat16 让内存减半，而且这颗 CPU 原生支持它（AVX512-BF16/AMX）。',
    'hint.bf16_gpu_old': '{name}（计算能力 {capability}）没有 bfloat16 张量核心：能运行，但是模拟的，很慢。这块 GPU 上请用 float16。',
    'hint.fp32_gpu': 'GPU 上的 float32 占用的显存是 float16/bfloat16 的两倍，也用不上张量核心最快的路径。',
    'hint.bf16_mps': 'MPS 上的 bfloat16 需要 macOS 14 或更新版本。',
    'hint.auto': 'auto 保留检查点里存储的数据类型（config.json 中的 torch_dtype/dtype）。',
    'note.migrate.noop': '空操作：权重本来就在 {device} 上，所以 Tensor.to() 直接返回了每个张量本身，没有复制（前后 data_ptr 相同）；这段时间只是遍历所有参数和缓冲区。',
    'note.migrate.copied': '把每个参数和缓冲区从 {src} 复制到了 {dst}，并让模块指向新的张量。',
    'note.migrate.auto_hooks': "device_map='auto' 在加载时就放置好了每一层，所以没有单独的 .to()。Accelerate 把各层分布到多个设备上并挂了钩子（见 hf_device_map）；对这样的模型调用 .to() 会被拒绝。",
    'note.migrate.auto_single': "device_map='auto' 在加载时就放置好了每一层，所以没有单独的 .to()。所有层都放得进一个设备，Transformers 直接加载到那里：没有钩子，也没有 hf_device_map（只有当层跨设备或磁盘时才会设置）。",
    'note.dtype.auto': 'auto：保留检查点自己的数据类型 {dtype}',
    'note.dtype.cast': '要求 {dtype}：from_pretrained 在加载时转换了权重',
    # 错误信息：哪里不对，该怎么做
    'err.unicode': '{what_zh}含有无效的 Unicode（第 {at:,} 个字符处有一个不成对的代理项 U+{code}）。请粘贴纯文本。',
    'err.prompt_type': '提示词必须是文本。',
    'err.prompt_long': '提示词有 {n:,} 个字符，上限是 {limit:,}（PLAYGROUND_MAX_PROMPT_CHARS）。请缩短它（这里的模型上下文本来就很短）。',
    'err.prompt_empty': "提示词是空的。输入几个词让模型续写，例如 'ROMEO:'。",
    'err.prompt_nul': '提示词含有 NUL 字节（二进制数据）。请粘贴纯文本。',
    'err.diag_type': '请以文本形式粘贴错误：一段 traceback 或它的最后一行。',
    'err.diag_long': '粘贴的文本有 {n:,} 个字符，上限是 {limit:,}（PLAYGROUND_MAX_DIAGNOSE_CHARS）。请只粘贴 traceback 的最后几行：错误在末尾。',
    'err.diag_empty': '没有可诊断的内容：请粘贴一段 traceback 或一行错误信息，例如错误的最后一行。',
    'err.temperature': 'temperature 必须在 0（贪心）到 5 之间；收到的是 {got}。',
    'err.top_p': 'top_p 必须在 (0, 1] 之内：即从多大比例的概率质量中采样；收到的是 {got}。',
    'err.whole': '{name} 必须是 {lo} 到 {hi} 之间的整数；收到的是 {got}。',
    'err.number': '{name} 必须是数字；收到的是 {got}。',
    'err.finite': '{name} 必须是有限的数字；收到的是 {got}。',
    'err.model_none': "没有指定模型。请从列表中选一个；'{bundled}' 可以离线使用。",
    'err.model_long': '模型名太长了。请使用 Hub id（owner/name）或本地文件夹路径。',
    'err.model_url': "不接受网址（{host}）。请给出 Hugging Face Hub id，例如 'gpt2'，或一个本地文件夹；'{bundled}' 可以离线使用。",
    'err.model_name': "{model} 既不是 Hub id（owner/name，只含字母、数字、'-'、'_'、'.'），也不是本地文件夹。试试 '{bundled}'，它可以离线使用。",
    'err.path_bad': '{model} 不是可用的路径。',
    'err.path_outside': '{model} 不在 playground 允许读取的文件夹内。请把模型放到 {roots} 之一下面，或把它的上级文件夹加入环境变量 PLAYGROUND_MODEL_DIRS。',
    'err.path_missing': "文件夹 {model} 不存在。请检查路径，或选择 '{bundled}'。",
    'err.path_file': '{model} 是一个文件；请给出存放 config.json 和权重的文件夹。',
    'err.no_config': "'{name}' 里没有模型：缺少 config.json。",
    'err.pickle_only': "'{name}' 只有 pickle 格式的权重（.bin/.pt）。playground 只加载 safetensors，因为反序列化 pickle 可能执行任意代码。请用 save_pretrained(safe_serialization=True) 转换。",
    'err.no_weights': "'{name}' 里没有 .safetensors 权重。",
    'err.st_unreadable': "'{name}' 不是可读的 safetensors 文件（下载不完整或已损坏？）。请重新下载或保存。",
    'err.st_truncated': "'{name}' 不完整：它的文件头描述了 {want}，而文件只有 {have}。请重新下载或保存。",
    'err.hub_offline': "'{ref}' 不在本地 Hugging Face 缓存中，而且连不上 Hub（{why}）。离线时请选择内置模型 '{bundled}'。",
    'err.not_causal': "'{name}' 不是 Transformers 认识的因果语言模型（model_type '{model_type}'）。",
    'err.hub_missing': "在 Hugging Face Hub 上找不到 '{ref}'。请检查拼写（owner/name）。",
    'err.remote_code_hub': "'{ref}' 需要来自 Hub 的自定义代码（trust_remote_code），playground 从不运行这类代码。",
    'err.remote_code': "'{name}' 需要自定义代码（trust_remote_code），playground 从不运行这类代码。",
    'err.device_none': '没有指定设备。请从这些中选一个：{usable}。',
    'err.device_name': '{device} 不是 PyTorch 认识的设备名。请使用 cpu、cuda:N、mps 或 auto。这里可用的有：{usable}。',
    'err.device_absent': '设备 {device} 在这里不可用：{reason}。可用的有：{usable}。',
    'err.dtype': '{dtype} 不是 playground 提供的数据类型。请从这些中选一个：{dtypes}（auto 保留检查点自己的数据类型）。',
    'err.not_loaded': '还没有加载模型。请先点“加载”（内置模型可以离线使用）。',
    'err.unloaded': '模型已被卸载。请先点“加载”。',
    'err.no_tokens': '提示词没有产生任何 token。请输入一些文字。',
    'err.context': '提示词有 {n} 个 token，max_new_tokens 是 {new}：共 {total} 个位置，但这个模型的上下文只有 {ctx}。请缩短提示词，或把 max_new_tokens 降到 {room}。',
    # 内存检查拒绝加载时的说明（由 estimate.refusal 拼成）
    'est.where.system': '系统可用内存（psutil）',
    'est.where.budget': '{env}={value}（限制了系统可用的 {system}）',
    'est.where.frees': '{where}，另加当前模型会先释放的 {frees}',
    'est.note.build': '首次使用时会先在内存中构建 float32 检查点（含余量 {build}）',
    'est.note.mps': 'MPS 与 CPU 共用内存：先加载再搬运时，两份拷贝会短暂同时存在',
    'est.reason.auto': '需要 {need}（权重 + {margin} 余量）；所有 GPU 和内存加起来只有 {pool} 空闲',
    'est.reason.cuda': '加载时需要 {need} 内存（可用 {avail}，{where}），并需要 {device} 上的 {vram}（空闲 {free}）',
    'est.reason.ram': '需要 {need}（权重 {weights} + {margin} 余量）；可用只有 {avail}（{where}）',
    'est.refuse': '不加载 {model}（{dtype}，{device}）：它{reason}。余量用于激活值和 KV 缓存（Accelerate 文档给出的约 20%）。',
    'est.refuse.note': '（{note}。）',
    'est.refuse.try': '可以试试：{tips}。',
    'est.sep': '；',
    'est.tip.dtype': '{dtype} 需要 {need}',
    'est.tip.auto': "设备选 'auto' 会把各层分布到 GPU 和 CPU 上",
    'est.tip.smaller': '换一个更小的模型（更小的数据类型也放不下）',
}


def t(key: str, lang: str = "en", **fields: object) -> str:
    """The text for `key` in `lang` ('en' or 'zh'); unknown languages fall back to English."""
    table = ZH if lang == "zh" else EN
    text = table.get(key, EN.get(key, key))
    return text.format(**fields) if fields else text
