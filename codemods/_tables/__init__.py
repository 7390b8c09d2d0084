"""Data tables shared by rule families (symbol moves, argument field maps). Generated tables keep their
generator script beside them."""
