"""What a finding reads as to a person: its standalone repro script (which carries the
contract as text), its brief repro, and its bug as a PyTorch issue."""
