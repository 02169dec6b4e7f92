"""navqa."""
