"""The corpus: a finding's entry (the record, built in one place), the folder of
entries and their scripts, and entries grouped into bugs."""
