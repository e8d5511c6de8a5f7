# runtime: skip
"""A loop around a model from a library the analyzer does not see (it is not installed here)."""
import torch
from somelib import build_model, load_batches

model = build_model("tiny")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for batch in load_batches():
    outputs = model(**batch)
    loss = outputs.loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
