"""The engine connection: what an engine is, the app's hold on it, its life, and how its values enter the UI."""
