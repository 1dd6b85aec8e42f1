"""The page's tabs, one module each: `build(page)` lays a tab out and wires its events."""
