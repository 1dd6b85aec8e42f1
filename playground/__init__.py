"""The device playground: PyTorch device and dtype handling for LLM inference, measured.

Layers, each importing only from the ones above it in this list (tests/test_layers.py checks it):

    core   errors, settings, paths, units, inputs, threads, i18n: no torch model code
    hw     devices, memory readings, bandwidth, the memory sampler, ZeroGPU
    load   catalog, checkpoints, synthetic models, the estimate, the timed loader, migration
    run    generation, the manual decode loop, the KV cache, the shared slot, Compare
    lab    the break-it harness and scenarios, the diagnoser, the tensor inspector
    web    the Gradio page and API (wiring), the views, the code to copy
    tools  the command line, bench, soak, the Space builder, training the bundled model

`run` and `lab` do not import each other, nor do `web` and `tools`.
"""
