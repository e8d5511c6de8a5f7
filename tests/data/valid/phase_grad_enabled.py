# runtime: trains
"""The classic train/val phase loop: gradients enabled only in the training phase with
torch.set_grad_enabled(phase == 'train'); backward and step only in that phase."""
import torch
import torch.nn as nn

torch.manual_seed(0)
loaders = {phase: [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(2)] for phase in ("train", "val")}
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)

for epoch in range(2):
    for phase in ("train", "val"):
        model.train() if phase == "train" else model.eval()
        running_loss = 0.0
        for inputs, labels in loaders[phase]:
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                outputs = model(inputs)
                loss = criterion(outputs, labels)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
            running_loss += loss.item() * inputs.size(0)
        if phase == "train":
            scheduler.step()
