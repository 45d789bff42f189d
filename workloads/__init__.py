"""Workloads: model output in each format, sized in characters, and chunkings into deltas."""

from .chunking import DEFAULT_CHUNKING, Chunking, chunk, parse_chunking

__all__ = ["DEFAULT_CHUNKING", "Chunking", "chunk", "parse_chunking"]
