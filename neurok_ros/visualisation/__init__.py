"""Headless renders: flat-shaded mesh images, GIF animations, plots."""
