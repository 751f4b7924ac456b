"""Runbook knowledge base: chunking, analyzers, versioned hybrid index, retrieval."""
