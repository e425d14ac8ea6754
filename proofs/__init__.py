"""Z3 encodings proving the papers' lemmas and theorems on bounded models, and users'
fork/join programs' laws symbolically."""
