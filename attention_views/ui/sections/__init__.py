"""Page sections: the parts of a page drawn by one call, each with its widgets and figures."""
