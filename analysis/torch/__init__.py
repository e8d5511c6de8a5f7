"""PyTorch semantics for the interpreter, by domain: tensors, modules, optimizers, grad mode, numerics."""
