"""Reading the question: its mentions (:mod:`.mentions`), its shape — counting, ordering,
yes/no, grouping (:mod:`.question_shape`) — the columns it asks for (:mod:`.asked_columns`),
its answer type (:mod:`.answer_type`), and the cue words all of them use (:mod:`.lexicon`)."""
