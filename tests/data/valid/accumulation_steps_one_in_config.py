# runtime: trains
"""The transformers-examples loop with its configuration in a dict: `gradient_accumulation_steps`
is 1, so the loss is not divided and `(step + 1) % 1 == 0` holds at every batch: the optimizer
steps and clears the gradients after each backward, there is no accumulation to normalise."""
import torch
import torch.nn as nn

args = {"gradient_accumulation_steps": 1, "max_grad_norm": 1.0, "epochs": 2}

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
loader = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(4)]
model.zero_grad()
for epoch in range(args["epochs"]):
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        if args["gradient_accumulation_steps"] > 1:
            loss = loss / args["gradient_accumulation_steps"]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args["max_grad_norm"])
        if (step + 1) % args["gradient_accumulation_steps"] == 0:
            optimizer.step()
            scheduler.step()
            model.zero_grad()
