"""Pure data types shared by every layer: IRIs, ontology, mappings, results, events.

Nothing in here performs I/O.
"""
