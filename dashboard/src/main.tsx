import { render } from 'preact';
import { App } from './app';
import './style.css';
import 'uplot/dist/uPlot.min.css';

render(<App />, document.getElementById('app')!);
