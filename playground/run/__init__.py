"""Running a loaded model: streaming generation, the manual decode loop, the shared slot, Compare."""
