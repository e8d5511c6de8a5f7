# reduction-of: diffusers@58eb52c0803e examples/community/imagic_stable_diffusion.py:211 GA101
# false: GA101
"""An embedding wrapped in nn.Parameter, then detached and made a new leaf that the optimizer trains.

The real code (Imagic): `text_embeddings = torch.nn.Parameter(text_encoder(ids)[0], requires_grad=True)`,
then `text_embeddings = text_embeddings.detach()` and `text_embeddings.requires_grad_()`, then
`optimizer = torch.optim.Adam([text_embeddings])`; the frozen U-Net's loss is backpropagated into the
embedding for some steps.

False finding: GA101 confirmed at `.detach()`: "cuts gradient to `text_embeddings` ... loss then reaches no
trainable parameter and backward() raises". The engine took `requires_grad_()` on the detached tensor for
a change of the Parameter it aliases (the detached tensor shares its storage), so the new leaf never
existed for it. In torch, `p.detach()` is a new tensor: `requires_grad_()` on it makes a new leaf and leaves
`p` as it was; that leaf is what the optimizer holds and what the loss reaches.

Verified with torch 2.13 (CPU): backward runs, the new leaf's `.grad` is set and Adam changes it; the
Parameter gets no gradient (its values follow only because the two share storage). Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Linear(4, 4).requires_grad_(False)
unet = nn.Linear(4, 4).requires_grad_(False)

emb = nn.Parameter(encoder(torch.randn(2, 4)), requires_grad=True)
original = emb
emb = emb.detach()
emb.requires_grad_()
start = emb.detach().clone()
optimizer = torch.optim.Adam([emb], lr=1e-2)
latents = torch.randn(2, 4)
for _ in range(5):
    noise = torch.randn(2, 4)
    loss = F.mse_loss(unet(latents + noise + emb), noise)
    loss.backward()
    assert emb.grad is not None
    optimizer.step()
    optimizer.zero_grad()
assert emb.is_leaf and not torch.equal(emb.detach(), start)
assert original.grad is None and original is not emb and original.data_ptr() == emb.data_ptr()
print("OK")
