"""SAGA's schema-aware grounding in the VKG setting (see ``docs/saga.md``).

=====================  ==============================================================
``schema_index``       δ(p)/ρ(p) of every property with provenance (ontology, mapping
                       templates, sampled evidence); unknown stays unknown
``typefilter``         keep p iff δ(p) = ∅ or δ(p) ∩ τ*(x) ≠ ∅ (NaVQA's expansion hook)
``lookup``             the type-blind pool ("available"), CompactFormat, the prior's ranking
``typestate``          the persistent type state Θ (lookups, patterns, δ/ρ, results)
``diagnose``           why a result is empty (type conflicts, templates, literals)
``repairs``            the deterministic repairs of an empty result
``sparql_text``        exact edits of query text
``tools``              search / lookup / examples / execute
``agent``              the ReAct agent (LLM or deterministic), :class:`AgentSession`
``repair``             ``repair_empty``: the pipeline's hook after an empty result
``vacuous``            an aggregate over nothing (one row of 0/unbound) is an empty result
=====================  ==============================================================
"""
