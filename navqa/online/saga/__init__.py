"""SAGA's schema-aware grounding in the VKG setting: schema index, type state, type filter,
answer-type prior, and the ReAct agent that also repairs empty results."""
