"""judge: facts -> hypotheses and a root cause, by an explicit cause/symptom model."""
