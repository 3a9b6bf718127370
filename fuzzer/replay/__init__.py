"""Saved entries run again: here (does the bug still reproduce?), under another
interpreter's torch (which releases have it?), and shrunk again in place."""
