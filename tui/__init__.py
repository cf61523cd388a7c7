"""The Textual playground: live panes over a torch.compile experiment.

Never imports torch: the worker process behind `playground.engine.client` does that.
"""
