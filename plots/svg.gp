# svg.gp: the chart just drawn, again as SVG (the report inlines these).
# `dynamic` lets the SVG scale to the page width.
set terminal svg noenhanced size 1100,650 dynamic font "sans,11"
set output out.".".chart.".svg"
replot
unset output
