"""The device playground: PyTorch device and dtype handling for LLM inference, measured."""
