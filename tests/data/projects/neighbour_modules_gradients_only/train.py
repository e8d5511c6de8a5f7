"""A growing network (gromo) links each merge node to the layers before it in a plain list
(references to neighbours registered elsewhere, kept out of the merge node's parameters on purpose),
and its test suite, in another file, runs a layer and `loss.backward()` only to fill gradient
statistics: no optimizer, no update anywhere. GA109 said "they feed `loss` but no optimizer updates
them" (confirmed); nothing updates any parameter here, so that proves nothing: the plain list is
suspicious at most (tests/test_model.py). No `# runtime:` header: not one of test_project's cases."""
import torch
from mods import Layer, Merge


def test_one():
    torch.manual_seed(0)
    merge = Merge(2)
    prev = Layer(2, 2)
    merge.set_previous_modules([prev])
    x = torch.randn(3, 2)
    loss = torch.norm(prev(x))
    loss.backward()
    assert prev.layer.weight.grad is not None
    assert len(list(merge.parameters())) == 0


test_one()
