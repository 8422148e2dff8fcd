"""One module per page (or group of pages), each with its own `routes`."""
