# runtime: every lora_B stays exactly zero: the adapters are never updated; verified with torch 2.13.0 + peft 0.21.2 (CPU)
import torch
import torch.nn as nn
from peft import LoraConfig, get_peft_model


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = MLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = get_peft_model(model, LoraConfig(r=4, target_modules=["fc1", "fc2"]))  # <- GA108
for step in range(5):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
