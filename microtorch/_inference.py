"""How many threads are inside inference_mode: autograd/grad_mode.py keeps the count, Tensor._make reads it. While
no thread is, making a tensor costs one read; while one is, what a thread inside the mode makes is an inference
tensor (Tensor._inference)."""
threads = 0
