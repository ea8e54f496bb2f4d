"""Trace Explorer: bind LLM eval badcases to inference-engine traces and explain them."""
__version__ = "0.1.0"
