"""The run's state: the snippet as shown, the watcher, the reports, what a compile error means, the View."""
