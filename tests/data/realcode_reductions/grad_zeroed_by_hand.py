# reduction-of: LoRA@c4593f060e6a examples/NLU/tests/test_optimization.py:79 GA201
# false: GA201
"""An optimizer test on a single tensor: after each step the gradient is cleared by hand,
`w.grad.detach_(); w.grad.zero_()` ("No zero_grad() function on simple tensors").

False finding: GA201 confirmed at `optimizer.step()`: "nothing in the loop clears the gradients of
`w`". `w.grad.zero_()` does (it is what zero_grad(set_to_none=False) runs); the engine now takes
`zero_()`/`detach_()` on a `.grad` as clearing it.

Verified with torch 2.13 (CPU): the gradient is zero after each clear and w converges. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
w = torch.tensor([0.1, -0.2, -0.1], requires_grad=True)
target = torch.tensor([0.4, 0.2, -0.5])
criterion = nn.MSELoss()
optimizer = torch.optim.AdamW(params=[w], lr=2e-1, weight_decay=0.0)
for _ in range(100):
    loss = criterion(w, target)
    loss.backward()
    optimizer.step()
    w.grad.detach_()
    w.grad.zero_()
    assert not w.grad.any()
assert torch.allclose(w, target, atol=1e-2)
print("OK")
