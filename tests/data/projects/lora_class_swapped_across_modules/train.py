# runtime: trains
"""LoRA fine-tuning as lit-llama writes it, across modules: a context manager of lora.py swaps
layers.Attention for a LoRA subclass (whose base is read when lora.py's class statement runs) while
the model is built; a name-filtered freeze spares the LoRA parameters, which train."""
import torch

from lora import lora, mark_only_lora_as_trainable
from layers import Model

torch.manual_seed(0)
with lora(r=2):
    model = Model(4)
mark_only_lora_as_trainable(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
