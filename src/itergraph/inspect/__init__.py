"""Tools that look inside loops, built on `itergraph.tracing`: comparisons of engines down to
the first divergence (`compare`), the time per loop and node (`profile`), the page that
draws a model and its trace (`view`) and the progress reporter (`progress`)."""
