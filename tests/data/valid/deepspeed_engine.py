# runtime: skip (needs deepspeed)
"""A DeepSpeed engine owns the optimizer: engine.backward() and engine.step()."""
import deepspeed
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4))
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                               config={"train_batch_size": 8})
for step in range(10):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
