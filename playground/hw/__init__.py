"""The hardware: devices and dtypes, memory readings, copy bandwidth, the memory sampler, ZeroGPU."""
