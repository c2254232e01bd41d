"""selection stage."""
