# runtime: lost-grads
"""A recurrent language model trained one sample at a time (RWKV_Pytorch's training script): each
sample is cut into chunks, each chunk's loss backpropagated, and the optimizer steps every
`accumulation_steps` samples. The gradients are cleared at the start of every sample, outside the
step's condition: each clear drops the samples before it, so every step applies the last sample's
gradient only."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(accumulation_steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(16, 8), nn.Linear(8, 16))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    samples = [torch.randint(0, 16, (1, 9)) for _ in range(8)]
    for step, x in enumerate(samples, start=1):
        optimizer.zero_grad()  # <- GA202
        for i in range(0, x.shape[1] - 1, 4):
            chunk, target = x[:, i : i + 4], x[0, i + 1 : i + 5]
            logits = model(chunk)[0, : target.shape[0]]
            loss = F.cross_entropy(logits, target) / accumulation_steps
            loss.backward()
        if step % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


train()
