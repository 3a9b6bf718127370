"""Triage: where in the compiler a finding's bug lives (the stage, the switches that
remove it, the bisector's pass), within a budget of fresh compiles."""
