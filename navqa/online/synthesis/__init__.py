"""Writing the query: the query graph (:mod:`.plan`), the offline synthesizer
(:mod:`.offline`) and the parts it places (columns, counting, negation, relations,
spatial, string patterns, validity), and the LLM synthesizer (:mod:`.llm`)."""
