"""The abstract interpreter core: Python semantics over abstract values, its state and trace."""
