"""Starting the window: the QApplication, the core app and the main window (the top layer of ui/)."""
