"""Stock drift rules (NM6xx): transformers 4.x -> 5.x and TRL 0.x -> 1.x API changes, from generated tables."""
