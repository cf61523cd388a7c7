"""The app's screens: the main panes, help, and the gallery picker."""
