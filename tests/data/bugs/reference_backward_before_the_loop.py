# runtime: trains
"""A reference pass before training (llm.c's train_gpt2.py writes the parameters and their
gradients for its C tests): `loss.backward()` fills every .grad, and the training loop clears the
gradients only after each step, so its first step applies the reference pass's gradients added to
its own."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
x, y = torch.randn(8, 6), torch.randn(8, 2)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
reference = {name: p.grad.clone() for name, p in model.named_parameters()}

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accumulation = 2
for step in range(4):
    for micro_step in range(accumulation):
        loss = nn.functional.mse_loss(model(x), y) / accumulation
        loss.backward()
    optimizer.step()  # <- GA201
    optimizer.zero_grad(set_to_none=True)
