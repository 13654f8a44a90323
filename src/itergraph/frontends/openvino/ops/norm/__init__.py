"""Normalisations (batch, group, MVN, L2, LRN ...): both directions."""
