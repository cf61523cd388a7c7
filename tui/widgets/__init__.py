"""The widgets the screens are built of: the pane deck, the bars, the line cursor, the terminal driver."""
