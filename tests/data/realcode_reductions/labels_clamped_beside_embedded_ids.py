# reduction-of: LoRA@c4593f060e6a examples/NLU/src/transformers/models/bert/modeling_bert.py:1803 GA110
# false: GA110
"""A question-answering head in the style of BERT's: the batch is a tuple of tensors moved to the
device by one comprehension, the token ids go through an embedding (whose backward keeps the ids),
and the start positions are clamped in place before the loss. The clamped tensor is the labels,
not the ids: the embedding's saved ids are untouched.

Verified with torch 2.13 (CPU): the model trains and the clamp runs every batch. Prints OK."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QAModel(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.qa_outputs = nn.Linear(dim, 2)

    def forward(self, input_ids, attention_mask, start_positions=None, end_positions=None):
        hidden = self.embeddings(input_ids) * attention_mask.unsqueeze(-1)
        start_logits, end_logits = self.qa_outputs(hidden).split(1, dim=-1)
        start_logits, end_logits = start_logits.squeeze(-1), end_logits.squeeze(-1)
        ignored_index = start_logits.size(1)
        start_positions.clamp_(0, ignored_index)
        end_positions.clamp_(0, ignored_index)
        start_loss = F.cross_entropy(start_logits, start_positions, ignore_index=ignored_index)
        end_loss = F.cross_entropy(end_logits, end_positions, ignore_index=ignored_index)
        return (start_loss + end_loss) / 2


def batches(n):
    for _ in range(n):
        ids = torch.randint(0, 50, (4, 12))
        yield ids, torch.ones(4, 12), torch.randint(0, 20, (4,)), torch.randint(0, 20, (4,))


torch.manual_seed(0)
model = QAModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for batch in batches(3):
    batch = tuple(t.to("cpu") for t in batch)
    inputs = {"input_ids": batch[0], "attention_mask": batch[1], "start_positions": batch[2], "end_positions": batch[3]}
    loss = model(**inputs)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    assert batch[2].max() <= 12
print("OK")
