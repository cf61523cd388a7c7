"""The worker's processes: the template that imports torch once and forks, the run's child, the
spare child, the re-exec that starts over, and what each needs to stay safe to fork and to kill."""
