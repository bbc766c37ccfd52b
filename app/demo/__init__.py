"""`meshnet demo`: a tracker and several node processes on one machine, end to end."""
